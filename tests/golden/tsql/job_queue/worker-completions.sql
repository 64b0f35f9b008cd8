-- job_queue: worker_completions
/* queuetop */ SELECT TOP (?) [Processing_Server], [Last_Attempt_Start_Date], [Last_Attempt_End_Date] FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE [Last_Attempt_End_Date] > DATEADD(millisecond, ?, GETDATE()) AND [Last_Attempt_End_Date] >= [Last_Attempt_Start_Date] ORDER BY [Last_Attempt_End_Date] DESC;
