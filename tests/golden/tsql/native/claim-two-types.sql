-- native: claim two types
/* queuetop */ UPDATE q SET [RetrievedDate] = SYSUTCDATETIME(), [RetrievedBy] = CAST(? AS nvarchar(128)),
                [ProcessingMark] = CAST(? AS uniqueidentifier), [TimeoutDate] = DATEADD(millisecond, ?, DATEADD(second, ?, SYSUTCDATETIME())),
                [Attempts] = q.[Attempts] + 1
            OUTPUT inserted.[WorkQueueID], inserted.[JobType], inserted.[JobInfo], inserted.[Priority], inserted.[CreatedDate],
                   inserted.[Attempts], inserted.[TimeoutDate]
            FROM [queuetop].[WorkQueue] AS q WITH (ROWLOCK, READPAST, UPDLOCK) INNER JOIN (SELECT TOP (?) qt_all.[WorkQueueID] FROM (SELECT * FROM (SELECT TOP (?) [WorkQueueID], [Priority], [AvailableDate] FROM [queuetop].[WorkQueue] WITH (ROWLOCK, READPAST, UPDLOCK) WHERE [RetrievedDate] IS NULL AND [AvailableDate] <= SYSUTCDATETIME() AND [JobType] = CAST(? AS nvarchar(128)) ORDER BY [Priority], [AvailableDate]) AS qt_arm0 UNION ALL SELECT * FROM (SELECT TOP (?) [WorkQueueID], [Priority], [AvailableDate] FROM [queuetop].[WorkQueue] WITH (ROWLOCK, READPAST, UPDLOCK) WHERE [RetrievedDate] IS NULL AND [AvailableDate] <= SYSUTCDATETIME() AND [JobType] = CAST(? AS nvarchar(128)) ORDER BY [Priority], [AvailableDate]) AS qt_arm1) AS qt_all ORDER BY qt_all.[Priority], qt_all.[AvailableDate]) AS picked ON q.[WorkQueueID] = picked.[WorkQueueID]
            WHERE q.[RetrievedDate] IS NULL;
