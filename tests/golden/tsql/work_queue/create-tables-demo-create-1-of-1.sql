-- work_queue: create_tables demo: create (1 of 1)
/* queuetop */ CREATE TABLE [dbo].[work_queue] ([work_queue_id] int IDENTITY(1, 1) NOT NULL PRIMARY KEY, [name] varchar(255) NULL, [processed_flag] bit NOT NULL DEFAULT 0);
