-- requests: create_tables demo: create (2 of 2)
/* queuetop */ CREATE TABLE [dbo].[RequestsCompleted] ([id] uniqueidentifier NOT NULL DEFAULT NEWID(), [request] varchar(512) NULL, [InsertedDate] datetime NOT NULL DEFAULT GETDATE(), [RemovedDate] datetime NOT NULL DEFAULT GETDATE(), [CompletedDate] datetime NULL);
