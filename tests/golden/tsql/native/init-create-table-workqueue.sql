-- native: init: create table WorkQueue
/* queuetop */ 
                CREATE TABLE [queuetop].[WorkQueue] (
                  [WorkQueueID] bigint IDENTITY(1, 1) NOT NULL,
                  [JobType] nvarchar(128) NOT NULL,
                  [JobInfo] nvarchar(max) NULL,
                  [Priority] tinyint NOT NULL DEFAULT 128,
                  [CreatedDate] datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
                  [AvailableDate] datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
                  [CreatedBy] nvarchar(128) NULL,
                  [RetrievedDate] datetime2(3) NULL,
                  [RetrievedBy] nvarchar(128) NULL,
                  [ProcessingMark] uniqueidentifier NULL,
                  [TimeoutDate] datetime2(3) NULL,
                  [Attempts] int NOT NULL DEFAULT 0,
                  CONSTRAINT [PK_WorkQueue] PRIMARY KEY CLUSTERED ([WorkQueueID]));
