-- work_queue: job_rows pending, first page
/* queuetop */ SELECT TOP (?) [work_queue_id], [name], [processed_flag] FROM [dbo].[work_queue] WITH (READPAST) WHERE ([processed_flag] = 0) ORDER BY [work_queue_id];
