-- requests: create_tables demo: create (1 of 2)
/* queuetop */ CREATE TABLE [dbo].[RequestsQueue] ([id] uniqueidentifier NOT NULL DEFAULT NEWID() PRIMARY KEY, [request] varchar(512) NULL, [InsertedDate] datetime NOT NULL DEFAULT GETDATE());
