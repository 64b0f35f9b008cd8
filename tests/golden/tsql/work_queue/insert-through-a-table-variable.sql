-- work_queue: insert through a table variable
/* queuetop */ DECLARE @qt_out TABLE (qt_0 int); INSERT INTO [dbo].[work_queue] ([name], [processed_flag]) OUTPUT inserted.[work_queue_id] INTO @qt_out VALUES (CAST(? AS varchar(255)), 0); SELECT * FROM @qt_out;
