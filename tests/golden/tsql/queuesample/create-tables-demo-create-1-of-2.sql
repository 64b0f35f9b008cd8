-- queuesample: create_tables demo: create (1 of 2)
/* queuetop */ CREATE TABLE [QueueSample].[WorkQueue] ([WorkQueueID] bigint IDENTITY(1, 1) NOT NULL PRIMARY KEY, [JobType] uniqueidentifier NOT NULL, [JobInfo] xml NULL, [CreatedDate] datetime NOT NULL DEFAULT GETDATE(), [CreatedBy] uniqueidentifier NULL, [RetrievedDate] datetime NULL, [RetrievedBy] uniqueidentifier NULL);
