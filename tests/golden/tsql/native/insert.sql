-- native: insert
/* queuetop */ INSERT INTO [queuetop].[WorkQueue] ([JobType], [JobInfo], [Priority], [CreatedBy]) OUTPUT inserted.[WorkQueueID] VALUES (CAST(? AS nvarchar(128)), CAST(? AS nvarchar(max)), CAST(? AS tinyint), CAST(? AS nvarchar(128)));
