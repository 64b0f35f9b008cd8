-- job_queue: count_state dead
/* queuetop */ SELECT COUNT(*) FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE ([Attempts] >= CAST(? AS int) AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]) AND ([Timeout_Date] <= GETDATE() OR [Processing_Mark] IS NULL));
