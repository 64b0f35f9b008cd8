-- job_queue: count_state timed_out
/* queuetop */ SELECT COUNT(*) FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE ([Processing_Mark] IS NOT NULL AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]) AND [Timeout_Date] <= GETDATE() AND [Attempts] < CAST(? AS int));
