-- work_queue: job_by_id queue
/* queuetop */ SELECT [work_queue_id], [name], [processed_flag], CASE WHEN [processed_flag] = 0 THEN 'pending' ELSE NULL END FROM [dbo].[work_queue] WITH (READPAST) WHERE [work_queue_id] = CAST(? AS int);
