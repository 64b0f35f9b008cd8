-- native: delete_state dead in batches
/* queuetop */ DELETE TOP (?) FROM [queuetop].[WorkCompleted] WITH (ROWLOCK, READPAST, UPDLOCK) WHERE [Outcome] = 'dead' AND [JobType] = CAST(? AS nvarchar(128));
