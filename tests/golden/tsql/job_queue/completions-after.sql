-- job_queue: completions_after
/* queuetop */ SELECT [ID], NULL, [Last_Attempt_End_Date], [Available_Date], [Last_Attempt_Start_Date], [Last_Attempt_Start_Date], [Last_Attempt_End_Date] FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE [Last_Attempt_End_Date] > CAST(? AS datetime) AND [Last_Attempt_End_Date] >= [Last_Attempt_Start_Date];
