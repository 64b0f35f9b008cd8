-- job_queue: retry_dead in batches
/* queuetop */ UPDATE TOP (?) [dbo].[Job_Queue] WITH (ROWLOCK, READPAST, UPDLOCK) SET [Attempts] = 0, [Processing_Mark] = NULL, [Timeout_Date] = NULL WHERE ([Attempts] >= CAST(? AS int) AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]) AND ([Timeout_Date] <= GETDATE() OR [Processing_Mark] IS NULL));
