-- job_queue: insert delayed through a table variable
/* queuetop */ DECLARE @qt_out TABLE (qt_0 bigint); INSERT INTO [dbo].[Job_Queue] ([Payload], [Priority], [Available_Date]) OUTPUT inserted.[ID] INTO @qt_out VALUES (CAST(? AS varchar(100)), CAST(? AS tinyint), DATEADD(millisecond, ?, GETDATE())); SELECT * FROM @qt_out;
