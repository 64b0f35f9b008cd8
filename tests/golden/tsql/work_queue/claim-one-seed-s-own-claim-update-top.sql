-- work_queue: claim_one seed's own claim (update_top)
/* queuetop */ UPDATE TOP (1) [dbo].[work_queue] WITH (READPAST) SET [processed_flag] = 1 OUTPUT inserted.[work_queue_id], NULL AS qt_type, NULL AS qt_token, NULL AS qt_attempts WHERE ([processed_flag] = 0);
