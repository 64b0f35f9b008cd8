-- native: count_state dead
/* queuetop */ SELECT COUNT(*) FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [Outcome] = 'dead' AND [JobType] = CAST(? AS nvarchar(128));
