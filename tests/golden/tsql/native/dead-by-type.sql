-- native: dead_by_type
/* queuetop */ SELECT [JobType], COUNT(*) FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [Outcome] = 'dead' GROUP BY [JobType];
