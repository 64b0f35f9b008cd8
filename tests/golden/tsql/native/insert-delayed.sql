-- native: insert delayed
/* queuetop */ INSERT INTO [queuetop].[WorkQueue] ([JobType], [JobInfo], [Priority], [AvailableDate]) OUTPUT inserted.[WorkQueueID] VALUES (CAST(? AS nvarchar(128)), CAST(? AS nvarchar(max)), CAST(? AS tinyint), DATEADD(millisecond, ?, SYSUTCDATETIME()));
