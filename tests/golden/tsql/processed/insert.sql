-- processed: insert
/* queuetop */ INSERT INTO [dbo].[work_items] ([COMMAND], [PROCESSED]) OUTPUT inserted.[ID] VALUES (CAST(? AS nvarchar(max)), 0);
