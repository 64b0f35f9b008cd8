-- job_queue: make_available in batches
/* queuetop */ UPDATE TOP (?) [dbo].[Job_Queue] WITH (ROWLOCK, READPAST, UPDLOCK) SET [Available_Date] = GETDATE() WHERE ([Processing_Mark] IS NULL AND [Attempts] = 0 AND [Available_Date] > GETDATE());
