-- native: make_available in batches
/* queuetop */ UPDATE TOP (?) [queuetop].[WorkQueue] WITH (ROWLOCK, READPAST, UPDLOCK) SET [AvailableDate] = SYSUTCDATETIME() WHERE ([RetrievedDate] IS NULL AND [AvailableDate] > SYSUTCDATETIME()) AND [JobType] = CAST(? AS nvarchar(128));
