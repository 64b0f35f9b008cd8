-- job_queue: recent_completions
/* queuetop */ SELECT TOP (?) [ID], [Last_Attempt_End_Date], [Available_Date], [Last_Attempt_Start_Date], [Last_Attempt_Start_Date], [Last_Attempt_End_Date], NULL FROM [dbo].[Job_Queue] WITH (READPAST) WHERE [Last_Attempt_End_Date] > CAST(? AS datetime) AND [Last_Attempt_End_Date] >= [Last_Attempt_Start_Date] ORDER BY [Last_Attempt_End_Date] DESC;
