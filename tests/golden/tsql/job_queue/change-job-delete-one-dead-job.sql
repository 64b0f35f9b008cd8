-- job_queue: change_job delete one dead job
/* queuetop */ DELETE FROM [dbo].[Job_Queue] WHERE (([Attempts] >= CAST(? AS int) AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]) AND ([Timeout_Date] <= GETDATE() OR [Processing_Mark] IS NULL))) AND [ID] = CAST(? AS bigint);
