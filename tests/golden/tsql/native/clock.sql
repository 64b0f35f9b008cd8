-- native: clock
/* queuetop */ SELECT SYSUTCDATETIME();
