-- job_queue: change_job make_available one scheduled job
/* queuetop */ UPDATE [dbo].[Job_Queue] SET [Available_Date] = GETDATE() WHERE (([Processing_Mark] IS NULL AND [Attempts] = 0 AND [Available_Date] > GETDATE())) AND [ID] = CAST(? AS bigint);
