import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

export class PayPalychApi implements ICredentialType {
	name = 'payPalychApi';

	displayName = 'PayPalych API';

	icon: Icon = { light: 'file:../icons/paypalych.svg', dark: 'file:../icons/paypalych.dark.svg' };

	documentationUrl =
		'https://github.com/n8n-nodes-paypalych/n8n-nodes-paypalych/blob/main/docs/merchant/node.md#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Token',
			name: 'apiToken',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			placeholder: '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT',
			description:
				'Merchant API token from the API integration page of your PayPalych account. It also signs the postbacks the service sends.',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: 'https://pal24.pro',
			required: true,
			placeholder: 'https://pal24.pro',
			description:
				'Address of the service without /api/v1: https://pal24.pro, https://paypalych.com, https://palych.io, a white-label copy, or a local sandbox such as http://127.0.0.1:8787',
		},
		{
			displayName: 'Shop ID',
			name: 'shopId',
			type: 'string',
			default: '',
			placeholder: 'e.g. 9rQBbwZV1g',
			description:
				'Optional. The shop of the shop settings in your merchant account: the default Shop ID of Bill › Create, and sent as shop_id on Bill › Search, Payment › Search and the Bill ID list (some deployments require it there). A Shop ID set on the node wins.',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiToken}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "").replace(/\\/api\\/v1$/i, "")}}',
			url: '/api/v1/merchant/balance',
			method: 'GET',
			headers: { Accept: 'application/json' },
		},
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						'The API token was rejected. Refresh it on the API integration page and paste the new one',
				},
			},
		],
	};
}
