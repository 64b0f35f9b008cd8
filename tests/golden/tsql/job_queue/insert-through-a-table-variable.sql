-- job_queue: insert through a table variable
/* queuetop */ DECLARE @qt_out TABLE (qt_0 bigint); INSERT INTO [dbo].[Job_Queue] ([Payload], [Priority]) OUTPUT inserted.[ID] INTO @qt_out VALUES (CAST(? AS varchar(100)), CAST(? AS tinyint)); SELECT * FROM @qt_out;
