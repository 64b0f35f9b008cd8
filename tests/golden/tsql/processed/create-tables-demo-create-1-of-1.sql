-- processed: create_tables demo: create (1 of 1)
/* queuetop */ CREATE TABLE [dbo].[work_items] ([ID] bigint IDENTITY(1, 1) NOT NULL PRIMARY KEY, [COMMAND] nvarchar(max) NULL, [PROCESSED] bit NOT NULL DEFAULT 0);
