-- job_queue: insert delayed
/* queuetop */ INSERT INTO [dbo].[Job_Queue] ([Payload], [Priority], [Available_Date]) OUTPUT inserted.[ID] VALUES (CAST(? AS varchar(100)), CAST(? AS tinyint), DATEADD(millisecond, ?, GETDATE()));
