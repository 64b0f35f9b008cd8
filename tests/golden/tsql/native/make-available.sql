-- native: make_available
/* queuetop */ UPDATE [queuetop].[WorkQueue] SET [AvailableDate] = SYSUTCDATETIME() WHERE ([RetrievedDate] IS NULL AND [AvailableDate] > SYSUTCDATETIME()) AND [JobType] = CAST(? AS nvarchar(128));
