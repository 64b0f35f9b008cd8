-- job_queue: change_job retry one dead job
/* queuetop */ UPDATE [dbo].[Job_Queue] SET [Attempts] = 0, [Processing_Mark] = NULL, [Timeout_Date] = NULL WHERE (([Attempts] >= CAST(? AS int) AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]) AND ([Timeout_Date] <= GETDATE() OR [Processing_Mark] IS NULL))) AND [ID] = CAST(? AS bigint);
