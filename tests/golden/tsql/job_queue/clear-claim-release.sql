-- job_queue: clear_claim release
/* queuetop */ UPDATE [dbo].[Job_Queue] SET [Processing_Mark] = NULL WHERE [ID] = CAST(? AS bigint) AND [Processing_Mark] = CAST(? AS uniqueidentifier) AND ([Processing_Mark] IS NOT NULL AND ([Last_Attempt_End_Date] IS NULL OR [Last_Attempt_End_Date] < [Last_Attempt_Start_Date]) AND [Timeout_Date] <= GETDATE() AND [Attempts] < CAST(? AS int));
