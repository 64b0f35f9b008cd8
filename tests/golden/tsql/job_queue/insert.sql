-- job_queue: insert
/* queuetop */ INSERT INTO [dbo].[Job_Queue] ([Payload], [Priority]) OUTPUT inserted.[ID] VALUES (CAST(? AS varchar(100)), CAST(? AS tinyint));
