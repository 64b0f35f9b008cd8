-- job_queue: clock
/* queuetop */ SELECT GETDATE();
