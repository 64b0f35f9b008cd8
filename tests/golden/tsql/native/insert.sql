-- native: insert
/* queuetop */ INSERT INTO [queuetop].[WorkQueue] ([JobType], [JobInfo], [Priority]) OUTPUT inserted.[WorkQueueID] VALUES (CAST(? AS nvarchar(128)), CAST(? AS nvarchar(max)), CAST(? AS tinyint));
