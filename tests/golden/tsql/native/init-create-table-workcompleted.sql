-- native: init: create table WorkCompleted
/* queuetop */ 
                CREATE TABLE [queuetop].[WorkCompleted] (
                  [WorkQueueID] bigint NOT NULL,
                  [JobType] nvarchar(128) NOT NULL,
                  [JobInfo] nvarchar(max) NULL,
                  [CreatedDate] datetime2(3) NULL,
                  [RetrievedDate] datetime2(3) NULL,
                  [CompletedDate] datetime2(3) NOT NULL,
                  [RetrievedBy] nvarchar(128) NULL,
                  [Attempts] int NULL,
                  [Outcome] varchar(16) NOT NULL,
                  CONSTRAINT [PK_WorkCompleted] PRIMARY KEY CLUSTERED ([WorkQueueID]));
