-- work_queue: clock
/* queuetop */ SELECT SYSUTCDATETIME();
