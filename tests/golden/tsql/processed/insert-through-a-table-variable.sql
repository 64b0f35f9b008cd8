-- processed: insert through a table variable
/* queuetop */ DECLARE @qt_out TABLE (qt_0 bigint); INSERT INTO [dbo].[work_items] ([COMMAND], [PROCESSED]) OUTPUT inserted.[ID] INTO @qt_out VALUES (CAST(? AS nvarchar(max)), 0); SELECT * FROM @qt_out;
