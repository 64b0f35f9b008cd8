-- job_queue: delete_state dead in batches
/* queuetop */ DELETE TOP (?) FROM [dbo].[Job_Queue] WITH (ROWLOCK, READPAST, UPDLOCK) WHERE ([Attempts] >= CAST(? AS int) AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]) AND ([Timeout_Date] <= GETDATE() OR [Processing_Mark] IS NULL));
