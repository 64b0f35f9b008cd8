-- job_queue: make_available
/* queuetop */ UPDATE [dbo].[Job_Queue] SET [Available_Date] = GETDATE() WHERE ([Processing_Mark] IS NULL AND [Attempts] = 0 AND [Available_Date] > GETDATE());
