-- native: release_state any type: back to pending
/* queuetop */ WITH qt_back AS (SELECT * FROM [queuetop].[WorkQueue] WITH (ROWLOCK, READPAST, UPDLOCK) WHERE ([RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME()) AND [Attempts] < CAST(? AS int)) UPDATE qt_back SET [RetrievedDate] = NULL, [RetrievedBy] = NULL, [ProcessingMark] = NULL, [TimeoutDate] = NULL;
