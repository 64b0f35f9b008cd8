-- requests: insert through a table variable
/* queuetop */ DECLARE @qt_out TABLE (qt_0 uniqueidentifier); INSERT INTO [dbo].[RequestsQueue] ([request]) OUTPUT inserted.[id] INTO @qt_out VALUES (CAST(? AS varchar(512))); SELECT * FROM @qt_out;
