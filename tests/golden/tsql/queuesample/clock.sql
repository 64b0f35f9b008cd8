-- queuesample: clock
/* queuetop */ SELECT GETDATE();
