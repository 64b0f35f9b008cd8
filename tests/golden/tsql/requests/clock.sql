-- requests: clock
/* queuetop */ SELECT GETDATE();
