-- processed: clock
/* queuetop */ SELECT SYSUTCDATETIME();
