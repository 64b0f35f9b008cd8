-- job_queue: count_state pending
/* queuetop */ SELECT COUNT(*) FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE ([Processing_Mark] IS NULL AND (([Attempts] = 0 AND [Available_Date] <= GETDATE()) OR ([Attempts] > 0 AND [Attempts] < CAST(? AS int) AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]))));
