-- native: claim any type
/* queuetop */ WITH c AS (
                SELECT TOP (?) * FROM [queuetop].[WorkQueue] WITH (ROWLOCK, READPAST, UPDLOCK)
                WHERE [RetrievedDate] IS NULL AND [AvailableDate] <= SYSUTCDATETIME()
                ORDER BY [Priority], [AvailableDate])
            UPDATE c SET [RetrievedDate] = SYSUTCDATETIME(), [RetrievedBy] = CAST(? AS nvarchar(128)),
                [ProcessingMark] = CAST(? AS uniqueidentifier), [TimeoutDate] = DATEADD(millisecond, ?, DATEADD(second, ?, SYSUTCDATETIME())),
                [Attempts] = [Attempts] + 1
            OUTPUT inserted.[WorkQueueID], inserted.[JobType], inserted.[JobInfo], inserted.[Priority], inserted.[CreatedDate],
                   inserted.[Attempts], inserted.[TimeoutDate];
