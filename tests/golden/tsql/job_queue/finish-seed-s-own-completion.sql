-- job_queue: finish seed's own completion
/* queuetop */ UPDATE [dbo].[Job_Queue] SET [Last_Attempt_End_Date] = GETDATE() WHERE [ID] = CAST(? AS bigint) AND [Processing_Mark] = CAST(? AS uniqueidentifier);
