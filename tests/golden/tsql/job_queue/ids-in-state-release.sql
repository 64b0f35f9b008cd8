-- job_queue: ids_in_state release
/* queuetop */ SELECT TOP (?) [ID], [Processing_Mark] FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE ([Processing_Mark] IS NOT NULL AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]) AND [Timeout_Date] <= GETDATE() AND [Attempts] < CAST(? AS int)) ORDER BY [ID];
