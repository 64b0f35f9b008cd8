-- native: enqueue
/* queuetop */ INSERT INTO [queuetop].[WorkQueue] ([JobType], [JobInfo], [Priority], [CreatedDate], [AvailableDate],
                [CreatedBy])
            OUTPUT inserted.[WorkQueueID]
            SELECT TOP (?) CAST(? AS nvarchar(128)), CAST(? AS nvarchar(max)), CAST(? AS tinyint), SYSUTCDATETIME(),
                   DATEADD(millisecond, ?, DATEADD(second, ?, SYSUTCDATETIME())), CAST(? AS nvarchar(128))
            FROM sys.all_columns AS a CROSS JOIN sys.all_columns AS b;
