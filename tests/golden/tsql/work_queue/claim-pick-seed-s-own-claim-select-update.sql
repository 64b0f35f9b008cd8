-- work_queue: claim_pick seed's own claim (select_update)
/* queuetop */ SELECT TOP (1) [work_queue_id], NULL AS qt_type, NULL AS qt_token, NULL AS qt_attempts FROM [dbo].[work_queue] WITH (UPDLOCK, READPAST) WHERE ([processed_flag] = 0);
