-- native: insert delayed
/* queuetop */ INSERT INTO [queuetop].[WorkQueue] ([JobType], [JobInfo], [Priority], [CreatedBy], [AvailableDate]) OUTPUT inserted.[WorkQueueID] VALUES (CAST(? AS nvarchar(128)), CAST(? AS nvarchar(max)), CAST(? AS tinyint), CAST(? AS nvarchar(128)), DATEADD(millisecond, ?, SYSUTCDATETIME()));
