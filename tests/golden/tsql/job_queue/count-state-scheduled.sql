-- job_queue: count_state scheduled
/* queuetop */ SELECT COUNT(*) FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE ([Processing_Mark] IS NULL AND [Attempts] = 0 AND [Available_Date] > GETDATE());
